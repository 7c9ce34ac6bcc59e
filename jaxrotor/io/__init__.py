"""Input and output: every TOML configuration, reports and figures."""
