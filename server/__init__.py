"""The Litestar server: HTTP, websockets, auth, persistence; a thin shell around the engines."""
