"""Know before you ship: evaluations, replay of recorded sessions, and a policy what-if."""
