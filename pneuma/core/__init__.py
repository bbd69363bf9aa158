"""The ground floor: what every other package of Pneuma uses and nothing of
Pneuma's it imports itself. The E_* error model, the fd-based sandbox and
file helpers, Pneuma's own state under ``.pneuma/``, the file filter, the
channels that ask a browser tab, and the backend contract
(docs/architecture.md)."""
