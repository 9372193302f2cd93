"""Shared building blocks for generators and validators (randomness, results, money)."""
