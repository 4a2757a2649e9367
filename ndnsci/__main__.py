import sys

from ndnsci.cli import main

sys.exit(main())
