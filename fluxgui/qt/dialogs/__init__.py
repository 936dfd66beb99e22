"""The application's dialogs, one module per job.

=====================  ==========================================================
module                 what it asks
=====================  ==========================================================
:mod:`.open_url`       the Open URL form (a database or Redis server, and the
                       store options its kind declares)
:mod:`.option_fields`  form rows built from the registry's option declarations
:mod:`.files`          the file and folder dialogs; files dropped on the window
:mod:`.passwords`      a URL's password, when the keyring has none
:mod:`.opening`        the whole open flows: :class:`~.opening.OpenRequest`,
                       :func:`~.opening.ask_url`, recent stores, what is remembered
:mod:`.encryption_key` an ``EncryptedSession`` store's key and TTL
:mod:`.confirm`        confirmations before destructive edits
:mod:`.message_edit`   the message editor (edit or insert one message)
:mod:`.transfer`       export and copy: what to move and where
:mod:`.progress`       the progress of an export, import or copy
:mod:`.keyring_state`  keyring answers without waiting on the UI thread
:mod:`.buttons`        the accept button and Cancel every form ends with
=====================  ==========================================================

Nothing here reads or writes a store: each dialog hands back what the user chose.
Import from the module (``from fluxgui.qt.dialogs.opening import ask_url``).
"""
