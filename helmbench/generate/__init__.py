"""Assisted authoring (`helmbench generate`): variants, model-free noise and draft scenarios,
written as ordinary spec files that stay out of the manifest until a reviewer signs them off.

A stage after `run` (it calls models through the run stage's provider and caches in the
store) that writes into the spec tree; nothing earlier imports it.
"""

from helmbench.generate.noise import TRANSFORMS, apply_noise
from helmbench.generate.noisy import generate_noise
from helmbench.generate.scenario import generate_scenarios
from helmbench.generate.variants import Outcome, generate_variants
from helmbench.generate.placement import GenerateError, Written

__all__ = ["GenerateError", "Outcome", "TRANSFORMS", "Written", "apply_noise", "generate_noise", "generate_scenarios",
           "generate_variants"]
