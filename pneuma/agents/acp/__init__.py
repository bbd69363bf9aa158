"""Agents that speak the Agent Client Protocol (``--backend acp``)."""
