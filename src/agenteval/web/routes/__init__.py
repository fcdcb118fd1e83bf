"""The API's routers, one per noun."""
