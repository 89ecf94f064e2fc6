"""The Panel app of noiselab (param models -> Viewer views -> one app factory)."""
