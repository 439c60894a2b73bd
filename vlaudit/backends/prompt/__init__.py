"""The words a chat backend sends and reads: the answer verbalizers, the K-way letter interface, the question wording (torch-free)."""
