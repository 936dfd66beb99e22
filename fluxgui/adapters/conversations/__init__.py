"""OpenAI Conversations stores: the history ``OpenAIConversationsSession`` keeps on the
server, read and written through the official ``openai`` client's ``conversations``
resources (the calls the Agents SDK makes).

One module per job: :mod:`.target` (recognising ``openai-conversations:`` targets, the
base URL, the conversation ids to list, the API key; no client imported),
:mod:`.client` (the client, its errors as one line), :mod:`.answers` (the server's
answers checked before use), :mod:`.items` (items as messages,
messages as the items the SDK writes), :mod:`.reading` (listing, cursor paging, search),
:mod:`.writing` (appends, deletes, clears and their undo, imports: the store itself) and
:mod:`.connect` (opening one).

Nothing is imported here: the registry recognises a target without loading ``openai``.
"""
