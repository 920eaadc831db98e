"""Conversations: each turn one call, stored before the next is asked, judged on the transcript.

`turns.py` builds each call's request from (case, transcript so far) and reads the simulated
user's reply; `verdict.py` decides a finished conversation; `runner.py` drives conversations in
parallel, one lane per model, on the same limiter, retry and budget machinery as single calls.
"""
