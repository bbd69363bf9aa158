"""Publishing a result where people who do not run Pneuma can see it
(``pneuma publish``, the Export menu's "Publish"; docs/sharing.md): the
built-in publishers (a branch of a git remote, a plain folder), the
person's targets, and building the folder a publisher is handed."""
