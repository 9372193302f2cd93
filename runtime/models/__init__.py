"""Model access: the litellm adapter and the embedded reference models."""
