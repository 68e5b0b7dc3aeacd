"""The command-line side: `make chat`, `make demo`, snapshots, and LocalSession behind them."""
