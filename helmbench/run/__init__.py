"""The run stage: plan what to ask, ask it (litellm → OpenRouter), evaluate, store.

session.py runs one invocation top to bottom; engine.py runs a phase of calls of any kind
(answer_kind.py: a model answers a case; judge/: the judge marks a criterion).

Only `helmbench.run.provider` imports litellm, and only when a real call is about to be
made, so planning, dry-runs and every other command stay fast and light.
"""
