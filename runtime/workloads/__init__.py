"""One package per workload: generator, grading, tools and reference behaviour."""
