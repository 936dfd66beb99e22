"""OpenAI Conversations stores: the history ``OpenAIConversationsSession`` keeps on the
server, read and written through the official ``openai`` client's ``conversations``
resources (the calls the Agents SDK makes).

One module per job: :mod:`.target` (recognising ``openai-conversations:`` targets, the
base URL, the conversation ids to list, the API key; no client imported),
:mod:`.client` (the client, its errors as one line), :mod:`.answers` (the server's
answers checked before use), :mod:`.items` (items as messages,
messages as the items the SDK writes), :mod:`.known` (what the parts of a store share:
the ids listed, the items read, the listing's snapshot), :mod:`.reader` (listing, cursor
paging, search), :mod:`.writes` (items appended and deleted), :mod:`.editor` (single
items deleted and added; no change in place), :mod:`.writer` (appends, clears and their
undo, imports), :mod:`.store` (the store holding those parts) and :mod:`.connect`
(opening one).

Nothing is imported here: the registry recognises a target without loading ``openai``.
"""
