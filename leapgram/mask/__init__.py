"""Token masks: the trie walk driving the lexer (and, for grammars, the parser)."""
