"""The spec's States and transitions: the payout lifecycle and the checkout rules that move links and payments."""
