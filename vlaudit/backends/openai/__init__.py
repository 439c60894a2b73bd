"""``openai:URL#MODEL``: yes/no margins from an OpenAI-compatible chat-completions server — the backend, its pool of servers, the answers it reads, what a server says of itself."""
