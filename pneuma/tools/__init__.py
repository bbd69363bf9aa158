"""The tool-contract runtime shared by every mode: errors, sandbox, schemas."""
