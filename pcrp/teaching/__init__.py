"""The lesson and the teaching views built on the layers below (one customer's choice)."""
