"""Results leave the room: one shareable HTML file with the artifact, its
turns and the conversation (docs/sharing.md). ``model`` is the file's data,
``builder`` gathers it from a workspace, ``scrub`` takes secrets out of the
conversation."""
