"""Ministral (Mistral3) scored through mistral-common, as the VCA paper does."""
