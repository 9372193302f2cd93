"""The judge of hybrid and judged workloads (seed 001 §5): what it is shown, how its reply is read.

- `anonymize`: model identity, provider names and self-references removed from an output
  before a judge (or a human reviewer) sees it;
- `protocol`: the judge's messages (the rubric verbatim, the material, a fixed reply format)
  and the reading of its reply into a judgment or an "invalid judgment";
- the judge models of an edition as callable model entries, and the family rule that decides
  when a second judge must grade a sample (§5.4), live in `lrc.runtime.lock.judges`: the
  compiler checks the rule too, and it may read only the lock part of the runtime.
"""
