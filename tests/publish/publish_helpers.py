"""Constants shared by the publishing tests and their fixtures."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
XSS = '<script>window.__xss=1</script><img src=x onerror="window.__xss=2">'
XSS_MODEL = "anthropic/claude-sonnet-4"
FORMAT_MODEL = "google/gemini-2.5-flash"
ERROR_MODEL = "openai/gpt-4.1-mini"
MODELS = (ERROR_MODEL, XSS_MODEL, FORMAT_MODEL)
DATASETTE_URL = "http://127.0.0.1:8001"
