"""What both games share: money, errors, randomness, wagers, the engine contract,
the chip ledger and its PostgreSQL storage."""
