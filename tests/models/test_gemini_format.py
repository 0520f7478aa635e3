"""gemini_format on its own: the blocked-answer text stays bounded whatever Gemini sends."""

from __future__ import annotations

from google.genai import types

from tether.models.gemini_format import blocked_text, stop_reason


def test_the_blocked_text_is_bounded():
    ratings = [
        types.SafetyRating(category=types.HarmCategory.HARM_CATEGORY_HARASSMENT, probability="HIGH")
    ] * 500
    text = blocked_text("prompt", "SAFETY" * 1000, ratings, "why " * 5000)
    assert text.startswith("[Gemini blocked the prompt: SAFETY")
    assert text.count("HARASSMENT: HIGH") == 8
    assert len(text) < 700


def test_finish_reasons():
    assert stop_reason("SAFETY") == stop_reason("PROHIBITED_CONTENT") == "content_filter"
    assert stop_reason("MAX_TOKENS") == "max_tokens"
    assert stop_reason("SOMETHING_NEW") == stop_reason("") == "end_turn"
