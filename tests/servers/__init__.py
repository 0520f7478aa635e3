"""Test servers on 127.0.0.1: the provider-shaped fault server and llm-katan launchers."""
