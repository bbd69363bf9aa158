# Pneuma's test helpers: the fixtures `pneuma_workspace` and `pneuma_server`
# (see `pneuma.testing`, and "Testing a mode" in Pneuma's docs/api.md).
pytest_plugins = ["pneuma.testing"]
