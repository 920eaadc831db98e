"""`helmbench review`: the clinicians' blind review page (a small ASGI app served by uvicorn on 127.0.0.1)."""
