"""The vocabulary of `gen_corpus.py`: word families the Porter stemmer folds, numbers,
identifiers, scripts without spaces, NFKC-changing characters, and the rarer edge inputs."""

from __future__ import annotations

from typing import Any

# --------------------------------------------------------------------------------------------
# Vocabulary
# --------------------------------------------------------------------------------------------

# Inflection families: words of a family share a Porter stem (mostly), so a response that says
# "shipping" where "shipped" was expected still matches under ROUGE-1 with stemming.
FAMILIES: list[list[str]] = [
    ["ship", "ships", "shipped", "shipping", "shipment", "shipments"],
    ["order", "orders", "ordered", "ordering"],
    ["check", "checks", "checked", "checking"],
    ["roll", "rolls", "rolled", "rolling"],
    ["deliver", "delivers", "delivered", "delivering", "delivery", "deliveries"],
    ["city", "cities"],
    ["temperature", "temperatures"],
    ["forecast", "forecasts", "forecasting", "forecasted"],
    ["book", "books", "booked", "booking", "bookings"],
    ["flight", "flights"],
    ["cancel", "cancels", "cancelled", "canceling", "cancellation"],
    ["refund", "refunds", "refunded", "refunding"],
    ["connect", "connects", "connected", "connecting", "connection", "connections"],
    ["happy", "happily", "happiness"],
    ["generate", "generates", "generated", "generating", "generation"],
    ["run", "runs", "running", "ran"],
    ["arrive", "arrives", "arrived", "arriving", "arrival"],
    ["prime", "primes"],
    ["number", "numbers", "numbered"],
    ["available", "availability"],
    ["schedule", "schedules", "scheduled", "scheduling"],
    ["recommend", "recommends", "recommended", "recommendation", "recommendations"],
    ["turn", "turns", "turned", "turning"],
    ["light", "lights", "lighting"],
    ["device", "devices"],
    ["relate", "related", "relating", "relation", "relational"],
    ["agree", "agreed", "agreement"],
    ["process", "processes", "processed", "processing"],
    ["update", "updates", "updated", "updating"],
    ["pay", "pays", "paid", "paying", "payment", "payments"],
    ["search", "searches", "searched", "searching"],
    ["reserve", "reserved", "reservation", "reservations"],
    ["weather", "weathered"],
    ["confirm", "confirms", "confirmed", "confirming", "confirmation"],
    ["help", "helps", "helped", "helping", "helpful"],
    ["try", "tries", "tried", "trying"],
    ["die", "dice", "dies", "died"],
    ["side", "sides", "sided"],
    ["result", "results", "resulted"],
    ["possible", "possibly", "possibility"],
    ["quick", "quickly", "quicker"],
]
_FUNCTION_WORDS = (
    "the a an is are was were be been your you i we it they to of in on for and or but not "
    "with at by from this that these will can has have had do does did as if so than then "
    "there here now today tomorrow please sure yes no"
)
FUNCTION_WORDS = _FUNCTION_WORDS.split()
CONTRACTIONS = ["don't", "it's", "you're", "I'll", "won't", "isn't", "can't", "we've",
                "don’t", "it’s", "o'clock", "user's", "users'"]
IDENTIFIERS = ["order_id", "device_2", "user_profile", "tracking_number", "ORD-4821",
               "follow-up", "e-mail", "abc123def", "v2.1", "snake_case_name"]
NUMBERS = ["3", "42", "2024", "1,000", "3.14", "10%", "$25.99", "07:00", "2025-03-14", "1st",
           "24/7", "0", "100", "7", "19.5", "-4", "1e3", "12:30pm"]
ACCENTED = ["café", "naïve", "Zürich", "São", "Paulo", "résumé", "façade", "Ærø", "Kraków",
            "Ålesund", "jalapeño", "crème", "brûlée", "déjà", "vu", "Niño", "Straße", "Ελλάδα",
            "Москва", "привет", "مرحبا", "שלום", "नमस्ते", "हिन्दी", "Français", "Ürümqi"]
CJK = ["東京", "天気", "注文", "配送", "ありがとうございます", "カタカナ", "ひらがな", "서울",
       "안녕하세요", "北京", "上海", "今日は晴れです", "価格は1000円です", "予約", "確認しました"]
NON_SPACED = ["สวัสดีครับ", "ภาษาไทย", "กรุงเทพ", "ขอบคุณ", "ที่นี่", "ສະບາຍດີ", "ພາສາລາວ",
              "សួស្តី", "ភាសាខ្មែរ", "မင်္ဂလာပါ", "မြန်မာ"]
NFKC_CHANGING = ["ﬁle", "ﬂight", "①", "②", "Ｈｅｌｌｏ", "１２３", "x²", "Ⅻ", "㎏", "ｶﾀｶﾅ",
                 "™", "½", "…", "ǅ", "e\u0301te", "ﬀ", "ſhip", "K"]
EMOJI = ["🚚", "✅", "👍🏽", "👩‍💻", "🌧️", "☀"]
PUNCT_END = [".", ".", ".", "!", "?", "...", ":)", ""]
PUNCT_MID = [",", ";", ":", " -", " —", " (", ")", '"', "'"]

# Rarer inputs for the differential fuzz (`--edge-rate`).
EDGE_TOKENS = [
    "", " ", "\u200b", "\u200d", "\u00ad", "\u00a0", "\u0301", "\u0e48", "๏", "฿", "๑๒๓",
    "เก", "가", "豈", "㐀", "𠀀", "・", "ｧ", "ー", "々", "क़", "मَرْحَبًا", "שָׁלוֹם", "བོད",
    "ΟΔΟΣ", "ß", "ẞ", "İstanbul", "ı", "ﬆ", "Å", "ⅷ", "⑳", "⑴", "㈱", "¼", "µ", "ﬅ",
    "\t", "\n\n", "rock'n'roll", "a_b_c", "__init__", "x" * 60, "ＡＢＣ", "٣٤", "୧",
    "\u0e01\u0e34\u0e4a", "\u1000\u103a", "\u17a2\u17c6", "ß\u0301", "Ǆ", "ǈ", "ﬃ",
    "\u2460\u2461", "ª", "º", "ᵃ", "₂", "\u3000", "\ufeff", "ㄱ", "\u1161", "\U0001d400",
]
ODD_VALUES: list[Any] = [True, False, 0, 1, -0.0, 0.0, 1.0, 2**63, 2**64 + 1, 9007199254740993,
                         0.1 + 0.2, 0.3, 1e-7, 5e-324, 1.7976931348623157e308, "", None, [],
                         {}, "Zu\u0308rich", "Zürich", "1", "01", " 1"]
