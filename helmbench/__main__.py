from helmbench.cli import main

main()
