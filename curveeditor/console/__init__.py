"""What the command line prints for a person (issue 25): :mod:`.style` (terminal or pipe, width,
colour), :mod:`.tables` (tables that fit the terminal: paths elided in the middle with the bone name
whole, numbers in their columns, units in the headers), :mod:`.verdict` (the one-line verdict per
file), :mod:`.progress` (a progress line on stderr for long work). Standard library only: the CLI
imports it before any command runs, and ``--help`` stays fast."""
