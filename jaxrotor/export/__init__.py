"""Take a design out: files other tools load (flight-stack parameters and the like), one module per target."""
