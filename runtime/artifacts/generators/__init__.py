"""The seeded task kinds of `lrc.runtime.artifacts.tasks` as versioned code components.

Why: a task spec that says "model.xlsx is generated from the edition's seed" must pin the
code that generates it, exactly as a workload pins its dataset generator, so the lock can
freeze it by fingerprint and `lrc execute` refuses to run changed code under an old lock.
Code components are one per module (`COMPONENT_ID` / `COMPONENT_VERSION`,
lrc.runtime.lock.codeprint), so each task kind has a module here, `lrc.task.<kind>`; its
fingerprint covers `tasks.py` and everything it imports (model, deck, the rng), transitively.

Every kind module exposes `generate(seed, task_id) -> tasks.Task` (`base.generate`): the
task id enters the seed, so two tasks of one kind in an edition get different inputs.
"""
