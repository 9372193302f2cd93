"""How a model is run on an item: single-shot and agentic."""
