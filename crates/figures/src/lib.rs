//! Figures: turns the model and analyses into scenes (timelines, running/waiting plots, heat maps).
