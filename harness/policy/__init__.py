"""The page's authority over the agent: permission rules, the approvals gate, the shell
line's words and the rules enforced where a command runs."""
