"""What the judge is shown: the prompt texts (`prompts`, versioned), the solved examples shown
before each question (`examples`), the invocation's text as the prompts quote it (`context`),
and the screen that cuts judge-directed passages out of the agent's text (`screen`,
`screen_units`). Plain text building: imports neither the judge engine nor the criteria.
"""
