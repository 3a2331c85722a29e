"""Claims: a reference split into claims (decompose), list and table structure, compound
claims split by rule, claims made to stand alone (decontext, rewrite), claim sets on disk."""
