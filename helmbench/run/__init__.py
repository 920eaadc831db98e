"""The executor: plan what to ask, ask it (litellm → OpenRouter), evaluate, store.

Only `helmbench.run.provider` imports litellm, and only when a real call is about to be
made, so planning, dry-runs and every other command stay fast and light.
"""
