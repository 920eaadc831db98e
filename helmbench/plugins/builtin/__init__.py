"""HELMBench's own evaluators and lint rules, registered as default plugins exactly as a third-party
package would register its own (see helmbench/plugins/registry.py)."""
