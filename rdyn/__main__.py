from rdyn.cli import main

raise SystemExit(main())
