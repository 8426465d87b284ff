"""The glue library's C is split by job into headers (``link/c/glue*.h``) that codegen joins in
one order: a header left out of that order would silently drop its entry points from the
library, and one the wheel leaves out would break every installed copy."""

from pathlib import Path

import tensorgraph.link.c as c_package
from tensorgraph.link.c.codegen import GLUE_PARTS

C_DIR = Path(c_package.__file__).parent


def test_every_glue_header_is_joined_into_the_glue_library_once_with_glue_h_last():
    on_disk = sorted(p.name for p in C_DIR.glob("glue*.h"))
    assert sorted(GLUE_PARTS) == on_disk
    assert len(set(GLUE_PARTS)) == len(GLUE_PARTS)
    assert GLUE_PARTS[-1] == "glue.h"  # the table of entry points names what the parts define


def test_glue_h_lists_each_part_it_is_joined_with_in_the_order_codegen_joins_them():
    overview = (C_DIR / "glue.h").read_text().split("*/", 1)[0]
    positions = [overview.find(f"  {name}  ") for name in GLUE_PARTS]
    assert -1 not in positions, dict(zip(GLUE_PARTS, positions))
    assert positions == sorted(positions)
