#!/bin/sh
# Rebuilds DejaVuSans-subset.ttf from Debian's fonts-dejavu-core (DejaVu Sans 2.37) with
# fontTools' subsetter (`pip install fonttools`). The subset keeps Latin (ASCII, Latin-1,
# Latin Extended-A), Greek letters, common punctuation, arrows and a few math signs; it
# drops hinting, layout tables and glyph names, which the render crate does not use.
set -eu
cd "$(dirname "$0")"
pyftsubset /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf \
    --unicodes="U+0020-007E,U+00A0-017F,U+0391-03A9,U+03B1-03C9,U+2010-2027,U+2030,U+2032,U+2033,U+2039,U+203A,U+2190-2195,U+2212,U+2215,U+221E,U+2248,U+2260,U+2264,U+2265,U+25A0-25A1,U+25CF" \
    --no-hinting --notdef-outline --layout-features='' --drop-tables+=GSUB,GPOS,GDEF,kern,FFTM,MATH \
    --name-IDs='*' --glyph-names=false --output-file=DejaVuSans-subset.ttf
