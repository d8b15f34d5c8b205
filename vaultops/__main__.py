import sys

from vaultops.cli import main

sys.exit(main())
