# pre_broker/ holds tasks as others wrote them (fixtures of test_harden.py): their tests are the tasks' own, run
# inside a task's verifier, never collected here
collect_ignore_glob = ["pre_broker/*"]
