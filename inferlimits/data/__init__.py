"""The data layer: TOML tables, each row with its source, and the objects read from them."""
