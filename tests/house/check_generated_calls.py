"""house.generated_calls: the reference backend's committed call table (ref_call_names.h,
ref_call_table.c, which let it build from its sources alone) is what gen_calls.py writes from
the ODLA headers now. After changing a header, refresh them with
  python3 runtime_stubs/reference/gen_calls.py runtime_stubs/include \\
      runtime_stubs/reference/ref_call_names.h runtime_stubs/reference/ref_call_table.c"""
import filecmp
import os
import subprocess
import sys
import tempfile

root = sys.argv[1]
ref = os.path.join(root, "runtime_stubs", "reference")
with tempfile.TemporaryDirectory() as tmp:
    names, table = os.path.join(tmp, "ref_call_names.h"), os.path.join(tmp, "ref_call_table.c")
    subprocess.run([sys.executable, os.path.join(ref, "gen_calls.py"),
                    os.path.join(root, "runtime_stubs", "include"), names, table], check=True)
    stale = [os.path.basename(f) for f in (names, table)
             if not filecmp.cmp(f, os.path.join(ref, os.path.basename(f)), shallow=False)]
if stale:
    sys.exit("stale in runtime_stubs/reference: " + ", ".join(stale) + "\n" +
             __doc__.split("\n", 2)[2])
print("the committed call table matches gen_calls.py's output")
