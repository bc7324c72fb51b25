import sys

from boi.cli import main

sys.exit(main())
