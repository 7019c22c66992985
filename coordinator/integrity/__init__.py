"""Online integrity indicators of a hybrid test: energy error and the energy balance, O(1) per step."""
