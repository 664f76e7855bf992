//! A backend-neutral scene of shapes and text, and the SVG, PNG and PDF backends that draw it.
